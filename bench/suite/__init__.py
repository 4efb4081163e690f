"""The accelerator suite's parts (bench/accelerator_suite.py runs each in a process of its own):
one module per part, each with `run(rec, sizes, deadline, args)`, and what they share (`common`)."""
