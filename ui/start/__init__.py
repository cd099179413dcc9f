"""The "Start here" tab: what the lab is, and class plans through its lessons (the plans as data)."""
