"""A differentiable program library (after a proposal to augment LLMs with one): a register machine
with call/return, its assembler,
discrete interpreter, and compiled programs (mod-n arithmetic as tables and circuits, recursive
Fibonacci, insertion sort, binary addition). docs/research/library.md describes the machine and language."""
