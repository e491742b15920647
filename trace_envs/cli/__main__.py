from trace_envs.cli import main

main()
