"""visuals.chart's lanes, coloured marks and a column's own line, read back as the tests read every HTML chart."""

import pytest

from tests.helpers.charts import read_chart
from visuals.chart import (
    Axis,
    Bar,
    Column,
    Html,
    Key,
    Lane,
    Lanes,
    Mark,
    Rule,
    Span,
    column_html,
    lanes_html,
    title_html,
)


def test_a_lanes_span_says_its_lane_its_length_and_its_start_and_is_placed_by_them():
    x = Axis(0, 100, (0, 50, 100), "ms")
    lanes = (Lane("fast", (Span("work", 10, 30, "#0072B2", hover="10 to 40"),)), Lane("slow", ()))
    drawn = lanes_html(Lanes(lanes, x, title="When", legend=(Key("work", "#0072B2"),)))
    work = read_chart(drawn).series("work")
    assert work.x == ["fast"] and work.y == [30] and work.customdata == [[10]] and work.looks == ["solid"]
    assert "--s:10;--l:30" in drawn and "--xlo:0;--xhi:100" in drawn  # its place, against the axis's range
    assert read_chart(drawn).title == "When" and 'title="10 to 40"' in drawn


def test_a_span_with_words_inside_has_a_light_look_and_an_unknown_look_is_refused():
    block = Span("block", 0, 16, "#009E73", "dashed", text="a1b2c3")
    drawn = lanes_html(Lanes((Lane("s", (block,)),), Axis(0, 16, ())))
    assert read_chart(drawn).series("block").looks == ["dashed"] and ">a1b2c3</i>" in drawn
    with pytest.raises(ValueError, match="a span's look is one of .*got 'striped'"):
        lanes_html(Lanes((Lane("s", (Span("block", 0, 1, "#000000", "striped"),)),), Axis(0, 1, ())))


def test_a_mark_may_have_its_own_colour_and_a_column_its_own_line():
    column = Column("1", (Bar("p", 0.5, "#0072B2"),), mark=Mark("u", 0.3, "#8A5F00"), rule=Rule("here", "#A04000"))
    drawn = column_html(column)
    assert "--m:#8A5F00" in drawn and read_chart(drawn).series("u").y == [0.3]
    assert "lc-rule-x" in drawn and "left:50.00%" in drawn and ">here</span>" in drawn  # down the column's middle
    plain = column_html(Column("1", (Bar("p", 0.5, "#0072B2"),), mark=Mark("u", 0.3)))
    assert "--m:" not in plain and "lc-rule" not in plain  # as before: the page's text colour, no line


def test_a_title_written_as_html_is_drawn_as_it_is_and_any_other_text_escaped():
    marked = title_html(Html("the <abbr class='lab-term'>roofline</abbr>"), "a < b")
    assert "<abbr class='lab-term'>roofline</abbr>" in marked and "a &lt; b" in marked
    assert "&lt;abbr" in title_html("the <abbr>roofline</abbr>")  # plain text, as every chart's title was
