"""The library's assembly sources (docs/research/library.md describes the language).

Kept as text so that they ship with the package; `{depth}` is filled in by programs.py.
"""

FIB_MAIN = """\
# Recursive Fibonacci: (a, b) -> F_{depth+1}, where F_0 = a, F_1 = b, F_k+1 = F_k + F_k-1 mod base.
# main sets the depth (a compile-time parameter) and calls fib, which recurses depth times: each
# level pushes its return address on a memory stack, so every call really returns.
main:                     # a in r0, b in r1; the answer in r1
    const {depth} r2      # additions still to do
    const 0 r4            # stack pointer: the next free memory cell
    call fib r5
    halt
"""

# The function alone, for callers that link it after their own code (see tests/test_library_grad.py).
FIB_FUNCTION = """\
fib:                      # (r0, r1, r2) -> r1; return address in r5, stack pointer in r4
    write r4 r5           # push the return address
    inc r4 r4
    isz r2 r6             # no addition left: return
    jump r6 fib_return
    add r0 r1 r3          # (a, b) <- (b, a + b)
    copy r1 r0
    copy r3 r1
    dec r2 r2
    call fib r5           # one level deeper
fib_return:
    dec r4 r4             # pop the return address
    read r4 r5
    ret r5
"""

FIB = FIB_MAIN + FIB_FUNCTION

SORT = """\
# Insertion sort of memory cells 0..k-1, ascending, in place; k in r0 (k < base).
main:
    const 1 r7            # the constant 1 (true): makes a jump unconditional
    const 1 r1            # i = 1
outer:
    lt r1 r0 r6           # i < k ?
    isz r6 r6
    jump r6 done
    read r1 r2            # key = mem[i]
    copy r1 r3            # j = i
inner:
    isz r3 r6             # j == 0: insert here
    jump r6 insert
    dec r3 r4             # j - 1
    read r4 r5            # mem[j - 1]
    lt r2 r5 r6           # key < mem[j - 1] ?
    isz r6 r6
    jump r6 insert        # no: insert here
    write r3 r5           # mem[j] = mem[j - 1]
    copy r4 r3            # j = j - 1
    jump r7 inner
insert:
    write r3 r2           # mem[j] = key
    inc r1 r1
    jump r7 outer
done:
    halt
"""

ADD2 = """\
# dfst's add2 task (binary addition) digit by digit, as the column adder does it: a's bits in cells
# 0..w-1, b's in w..2w-1, least significant first, w in r0; the sum's w + 1 bits go to 2w..3w.
main:
    const 1 r7            # the constant 1
    const 0 r1            # i = 0
    const 0 r2            # carry = 0
    add r0 r0 r3          # 2w: where the sum's bits go
loop:
    eq r1 r0 r6           # i == w: done
    jump r6 done
    read r1 r4            # a_i
    add r1 r0 r6          # w + i
    read r6 r5            # b_i
    add r4 r5 r4          # a_i + b_i
    add r4 r2 r4          # s = a_i + b_i + carry, 0..3
    lt r7 r4 r2           # carry = 1 < s
    add r2 r2 r5          # 2 carry
    sub r4 r5 r4          # the sum's bit: s - 2 carry
    add r3 r1 r6          # 2w + i
    write r6 r4
    inc r1 r1
    jump r7 loop
done:
    add r3 r0 r6          # 3w: the last carry
    write r6 r2
    halt
"""
