"""A class round: the teacher runs one prompt on the projector and every student joins from a laptop or phone.

Three kinds of round, on the round's one context (its prompt and the tokens appended so far):
1) guess, then reveal: each student picks the next token they expect; the teacher reveals the class's guesses beside
   the model's probabilities;
2) sample together: each student draws one token with their own seeded generator from the round's processed
   distribution (the lab's own pipeline, computed once per step and settings); the projector counts the draws
   against the expected counts, and a chi-square test says whether they fit;
3) greedy together: each student runs greedy on the round's context, their own steps through the shared scheduler,
   and the projector says whether every token agreed.
`round.py` holds a round and its rules (who may change it, one lock for every change), `records.py` what a page
shows of it as plain data.
"""
