"""In-scope variables (SPARQL 1.1 section 18.2.1) on hand-built patterns."""

import pyoxigraph as ox

import sepia.algebra as a

EX = "http://example.org/"
X, Y, Z, W = (ox.Variable(n) for n in "xyzw")


def triple(s, p, o):
    return a.Bgp((a.TriplePattern(s, ox.NamedNode(EX + p), o),))


def test_minus_keeps_only_the_left_variables_and_blank_nodes_are_not_variables():
    pattern = a.Minus(a.Join(triple(X, "p", ox.BlankNode("b")), triple(ox.BlankNode("b"), "q", Y)),
                      triple(Z, "r", W))
    assert a.in_scope(pattern) == (X, Y)


def test_extend_and_group_bind_their_variables_in_order():
    grouped = a.Group(triple(X, "p", Y), (X,), (a.AggregateBinding(
        Z, a.Aggregate(a.AggregateFunction.COUNT, ())),))
    assert a.in_scope(a.Extend(grouped, W, X)) == (X, Z, W)


def test_negated_event_parts_bind_nothing():
    event = a.NoTail(a.Event(triple(X, "delayAt", Y)), a.Event(triple(X, "arriveAt", Z)))
    assert a.in_scope(a.Match(event)) == (X, Y)
    spaseq = a.Seq(a.Event(triple(X, "p", Y)), a.Negation(a.Event(triple(W, "q", Z))),
                   a.SelectionPolicy.SKIP_TILL_NEXT)
    assert a.in_scope(a.Match(spaseq)) == (X, Y)
