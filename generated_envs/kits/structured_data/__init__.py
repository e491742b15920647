"""What ``generated_envs/structured_data.py`` builds its tasks from: airline itineraries and retail product variants."""
