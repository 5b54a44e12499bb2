"""Reads standard input at a prompt (input()): under triage, which gives the program an empty stdin
unless --stdin FILE, it gets EOF at that line. With a number it compiles and prints n + 1."""
n = int(input("enter a number: "))

import torch  # noqa: E402


@torch.compile(backend="eager")
def add(x):
    return x + n


print(add(torch.ones(2)).tolist())
