"""The namespaces Sepia reads and writes, defined once: XSD datatypes, RDF and RDFS (the
entailment regime and the workloads' schemas) and PROV (``prov:generatedAtTime`` stamps
time-varying background graphs and stream elements)."""

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
PROV = "http://www.w3.org/ns/prov#"
