// Package otelpipe is the real OpenTelemetry pipeline test of issue 28 §1:
// an MCP server built with the MCP Go SDK and an A2A agent built with
// a2a-go, instrumented with the OpenTelemetry Go SDK, export their spans over OTLP/HTTP to a Collector
// built from its modules (the OTLP receiver and the contrib Kafka
// exporter, as a library), which writes them to the real Kafka; errtrail's
// ingest consumes that topic into ClickHouse, and each stored row is
// compared, field by field, with what the same reply's wire bytes decode
// to.
//
// It is a module of its own so that the Collector's dependency graph stays
// out of errtrail's; scripts/test vets it and runs its tests.
package otelpipe
