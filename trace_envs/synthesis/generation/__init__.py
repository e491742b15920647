"""The generation loop: prompt -> generator -> module -> gates, with repair rounds, resumable attempts, the
catalogue and model generators, and one synthesis per kept capability of an analysis."""
