"""The request builders of ``generated_envs/multi_step.py``: compound airline and retail requests, sub-task by sub-task."""
