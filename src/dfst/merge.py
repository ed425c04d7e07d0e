"""Transitional: the old `dfst.merge.extract_merged(weights, data, alphabet, blank)`; removed once
training calls `dfst.extract.extract(model, ptos, method="merge")`."""

from types import SimpleNamespace

from dfst.extract.merge import MERGE_RADII, extract_merged as _merged


def extract_merged(weights, data, alphabet, blank, radii=MERGE_RADII):
    traces = [data.trace(i) for i in range(data.samples)]
    return _merged(weights, traces, SimpleNamespace(alphabet=alphabet, blank=blank), radii)
