"""Screens: the play and replay workbenches, the Why detail screen, help."""
