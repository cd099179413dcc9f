"""The continuous batching lesson drawn: the server's forward passes, who shared them, and the prefix cache's blocks."""
