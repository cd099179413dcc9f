"""Sample together: a class round on one tab, the projector's page and every student's (ui/classround/tab.py)."""
