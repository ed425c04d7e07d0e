"""The DFST parameter count, k·d·(k + d + 5) + d, without importing torch."""


def param_count(k: int, d: int) -> int:
    """Parameters of a DFST with k symbols and d hidden dimensions (A, B, C and h0)."""
    return k * d * (k + d + 5) + d
