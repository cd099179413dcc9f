from visuals.words import count


def test_one_of_a_thing_is_singular_and_every_other_count_plural():
    assert count(1, "token") == "1 token"
    assert count(0, "token") == "0 tokens"
    assert count(2, "target pass", "target passes") == "2 target passes"
    assert count(1, "target pass", "target passes") == "1 target pass"
    assert count(1024, "forward pass", "forward passes") == "1,024 forward passes"
