"""The step-by-step tab's own views: the sequence as chips and the decode loop, the timeline, the penalties."""
