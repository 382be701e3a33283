"""The host's response to waiting, as the prediction check measures it. On a host whose other
tenants evict a waiting rank's cache and TLB, a program's own computation runs slower after
longer waits (docs/prediction-against-emulation.md, "Computation that grows with waiting"), by a
share of the added time that depends on the program and on the host at the time, whichever knob
made it wait (the same file's "The host's response, measured beside the prediction" has the figures).
The replay keeps computation as traced. The check measures the share on a program's other
settings in the same run, never on the setting it predicts, and adds it where it is resolved
above zero (a computation that shrinks is something else, such as FT's copies moving). It needs
two other settings at least: a share from one carries that setting's own cause with it (NPB's FT,
checked under L and G only, gave G the share its L showed, and its computation did not change
under G)."""
from loggp.experiments import precision

# the fewest other settings a share is taken from
MIN_OTHER_SETTINGS = 2


def shares(computation, predicted, knob):
    """Each paired round's computation change over its setting's predicted added time, for every
    knob but `knob` (computation: {knob: [change per pair, s]}; predicted: {knob: s})."""
    return [change / predicted[other] for other, changes in computation.items()
            if other != knob and predicted.get(other, 0.0) > 0 for change in changes]


def response(computation, predicted, knob):
    """The share's median and 95 % interval (precision.median_interval) over the other knobs'
    pairs, or None when fewer than MIN_OTHER_SETTINGS other knobs have a pair."""
    others = [other for other, changes in computation.items()
              if other != knob and changes and predicted.get(other, 0.0) > 0]
    if len(others) < MIN_OTHER_SETTINGS:
        return None
    return precision.median_interval(shares(computation, predicted, knob))


def resolved(share):
    """True when the share's interval lies wholly above zero: a slower computation, resolved."""
    return share is not None and share.bounded and share.low > 0


def with_response(predicted_s, share):
    """(estimate, low, high) of the added time predicted with the host's response: the replay's
    prediction grown by the share and its interval where the share is resolved, else unchanged."""
    if not resolved(share):
        return predicted_s, predicted_s, predicted_s
    return (predicted_s * (1 + share.estimate), predicted_s * (1 + share.low), predicted_s * (1 + share.high))
