"""The Spark runtime: Sepia's data pipeline on Spark Structured Streaming."""
