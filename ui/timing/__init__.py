"""The "Prefill vs decode" tab: the timing sweeps and their roofline, the what-if calculator and the regime map."""
