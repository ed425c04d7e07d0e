"""What dfst reads and writes, and what it may spend: every read of a user's file (`inputs`, capped by
`limits`), every write and removal (`outputs`: only dfst's own files are ever replaced), the locks
that keep one writer per output or run (`locks`, `run_guard`), and checked access to the JSON records
dfst reads back (`records`). docs/safety.md. Nothing here imports from a layer above.
"""
