"""dfst's length-generalisation protocol: a DFST's evaluation, and any model scored under it (docs/score.md).

    from dfst.protocol import score
    result = score(lambda pairs: [str(int(a) + int(b)) for a, b in pairs], "add10", digits=(10, 100))
    result.robust_lg, result.details["instances_sha256"]

    config     `EvalConfig`: the one config of every evaluation (lengths, instances, bounds)
    ladder     `climb`: the one ladder loop (memory, time budget, stops), `max_passing`
    evaluate   a DFST's weights or an automaton on dfst's engine (`dfst eval`, training, reproduce):
               `run_protocol`
    eval_files what `dfst eval` leaves next to a checkpoint, and `dfst replay` of its failure
    instances  a length's instances (`level_instances`, `level_stream`), none a training pair (`HeldOut`);
               numbered requests, the set's SHA-256
    tally      one length's verdicts: hard set and random pairs apart, Wilson interval, failure bound
    scorer     `score` (a Python function), `score_with` (any answerer), the lengths and the budget
    child      `CommandModel`: a command answering JSON Lines (`dfst score --cmd`), pipelined
    answers    `AnswersFile`: answers computed elsewhere (`dfst score --answers`)
    export     `write_instances`: the set as a file (`dfst score --instances-out`)
"""

from dfst.protocol.config import EvalConfig
from dfst.protocol.scorer import score, score_with
from dfst.protocol.tally import DEFAULT_RANDOM, failure_rate_bound, pairs_to_catch

__all__ = ["DEFAULT_RANDOM", "EvalConfig", "failure_rate_bound", "pairs_to_catch", "score", "score_with"]
