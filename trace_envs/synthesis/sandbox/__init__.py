"""The sandbox the gates run a candidate module in: a subprocess with its own mounts, limits and audit hook;
nothing of the module runs in the parent process."""
