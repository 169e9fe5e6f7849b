"""Complex event processing: SPAseq's event automaton and its runs, the event trees of
RSEP-QL, CQELS-CEP and EP-SPARQL, event mappings over intervals, consumption of the
occurrences a match used."""
