"""The "Sampler sandbox" tab: each strategy alone on the same logits, the temperature sweep, the stage orders."""
