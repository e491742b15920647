"""Target domains reproduced exactly (tau2-bench airline and retail) and their shared machinery."""
