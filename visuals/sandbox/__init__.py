"""The sampler sandbox drawn: the temperature sweep and where the engines' stage orders keep different tokens."""
