"""The "Continuous batching" tab: this server's own traffic, who shared each forward pass, and the prefix cache."""
