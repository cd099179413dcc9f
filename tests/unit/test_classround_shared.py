"""A round in Redis, as a lecture hall's replicas share it: two other processes (two replicas) see the round this one
started and draw into it at the same moment as its teacher's Draw each; every draw is counted once, and each
student's draws are their own seeded generator's, whichever process drew them."""

import json
import subprocess
import sys
import time
from collections import Counter

import torch

from decoding.classround.records import PROJECTOR, SAMPLE
from decoding.classround.round import ROUND_SEED, Round
from decoding.classround.shared import RedisState, connect
from decoding.pipeline import SamplerSettings, select
from decoding.prompts import encode_prompt
from tests.helpers.redis_server import emptied
from ui.launch import ROOT

KEY = "the-teacher's-key"
TOP8 = SamplerSettings(top_k=8)
EACH = 60  # draws each student makes from their own replica
# a replica: it finds the round in Redis, waits for the start signal, and draws for its students; prints what it drew
REPLICA = """
import json, sys, time
import redis
from decoding.classround.round import Round
from decoding.classround.shared import RedisState, connect
from decoding.models import TINY, load_model

url, code, each, students = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
client = connect(url)
r = Round.attach(load_model(TINY, device="cpu", dtype="float32"), RedisState(client, code))
client.incr("ready")
while not client.exists("go"):  # every replica starts drawing at once
    time.sleep(0.01)
print(json.dumps({s: [r.draw_one(s)[0].id for _ in range(each)] for s in students}))
"""


def test_two_replicas_and_the_teachers_draw_each_count_every_draw_once(tiny, redis_url):
    client = connect(emptied(redis_url))
    prompt = encode_prompt(tiny.tokenizer, "hello there", chat=False)
    r = Round(tiny, prompt, TOP8, SAMPLE, code="K7QF", key=KEY, draws_per_s=1e9, state=RedisState(client, "K7QF"))
    r.open()
    groups = [["a0", "a1", "a2"], ["b0", "b1", "b2"]]
    seeds = {s: 100 + k for k, s in enumerate(groups[0] + groups[1])}
    replicas = [
        subprocess.Popen(
            [sys.executable, "-c", REPLICA, redis_url, "K7QF", str(EACH), ",".join(group)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for group in groups
    ]
    while int(client.get("ready") or 0) < len(replicas):  # both replicas found the round
        assert all(p.poll() is None for p in replicas), "a replica exited before drawing"
        time.sleep(0.05)
    for student, seed in seeds.items():  # seated now: a seat not heard from for 8 s is counted out
        r.join(student, seed)
    client.set("go", 1)
    made = r.draw_each(KEY, 10)  # the teacher's press, from this process, while the replicas draw
    drawn = {}
    for p in replicas:
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0
        drawn |= json.loads(out)

    numbers = r.numbers(KEY)["draw"]
    assert made == 10 * (len(seeds) + 1)
    assert numbers["made"] == numbers["total"] == EACH * len(seeds) + made  # none lost, none twice
    by = r.draw.by_student
    counted = Counter(t for tokens in by.values() for t in tokens)
    assert numbers["counts"] == {str(t): n for t, n in counted.items()}
    processed = r.run.preview(TOP8)
    for student, seed in [*seeds.items(), (PROJECTOR, ROUND_SEED)]:
        own = drawn.get(student, [])
        assert Counter(own) <= Counter(by[student]) and len(by[student]) == len(own) + 10
        # one generator per student, whichever process held it: its draws are the seeded sequence's, in some order
        generator = torch.Generator().manual_seed(seed)
        assert sorted(by[student]) == sorted(select(processed.final, TOP8, generator) for _ in by[student])
