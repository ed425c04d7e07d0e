"""Studies: many runs at once, and what is measured across them.

`reproduce` trains and scores every task over seeds with its recipe, `sweep` a grid of recipe options,
each a `cells.Cell` run by `executors` (one after another, or as Ray tasks); `learnability`,
`mutations` and `bench` are `dfst bench`'s measurements. Nothing below this layer imports from here.
"""
