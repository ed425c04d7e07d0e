"""Arithmetic circuits from the seed's probabilistic logic gates (eqs. 8-9), on bit probabilities.

A value's one-hot vector becomes bit probabilities by a dot product with the table of its binary
digits; bits become a one-hot vector again by the seed's closed form (appendix B): the probability
of value x is the product over bits of b_i or (1 - b_i). Both are exact on one-hot inputs. The
circuits work modulo 2**bits, so the machine accepts circuit instructions only in a power-of-two base.
Each function takes tensors (any shape, bits on the last axis, least significant first) or floats.
"""

from __future__ import annotations

import torch


def and_(a, b):
    return a * b


def or_(a, b):
    return a * b + (1 - a) * b + a * (1 - b)


def xor(a, b):
    return (1 - a) * b + a * (1 - b)


def not_(a):
    return 1 - a


def full_adder(a, b, carry):
    """(sum, carry out) of three bits."""
    half = xor(a, b)
    return xor(half, carry), or_(and_(a, b), and_(carry, half))


def ripple_add(a: torch.Tensor, b: torch.Tensor, carry=0.0) -> torch.Tensor:
    """a + b + carry modulo 2**bits: the ripple-carry adder, one full adder per bit."""
    bits = []
    carry = torch.as_tensor(carry, dtype=a.dtype).expand_as(a[..., 0])
    for i in range(a.shape[-1]):
        s, carry = full_adder(a[..., i], b[..., i], carry)
        bits.append(s)
    return torch.stack(bits, -1)


def ripple_sub(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a - b modulo 2**bits: a + not(b) + 1."""
    return ripple_add(a, not_(b), 1.0)


def shift_add_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a * b modulo 2**bits: add a shifted left by i wherever bit i of b is set (and-gated)."""
    width = a.shape[-1]
    total = torch.zeros_like(a)
    for i in range(width):
        shifted = torch.cat([torch.zeros_like(a[..., :i]), a[..., :width - i]], -1)
        total = ripple_add(total, and_(shifted, b[..., i:i + 1]))
    return total


CIRCUITS = {"add": ripple_add, "sub": ripple_sub, "mul": shift_add_mul}


def bit_table(base: int) -> torch.Tensor:
    """base x bits: row x holds the binary digits of x, least significant first."""
    width = max(1, (base - 1).bit_length())
    values = torch.arange(base)[:, None]
    return ((values >> torch.arange(width)) & 1).to(torch.get_default_dtype())


def to_bits(unit: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """(..., base) value distribution -> (..., bits) probability of each bit being 1."""
    return unit @ table


def to_unit(bits: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """(..., bits) -> (..., base): P(x) = prod_i (b_i if bit i of x else 1 - b_i), independent bits."""
    b = bits[..., None, :]  # (..., 1, bits)
    return (table * b + (1 - table) * (1 - b)).prod(-1)


def circuit_value(op: str, u: torch.Tensor, v: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """The machine's circuit instruction: value distributions in, value distribution out."""
    return to_unit(CIRCUITS[op](to_bits(u, table), to_bits(v, table)), table)
