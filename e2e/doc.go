// Package e2e holds the end-to-end tests: they build the real service binaries and run them
// as processes.
//
// The flow tests start all eight binaries per scenario against the real Postgres and Redis
// (isolated by pkg/testinfra: own schema, own key prefix), with the outside world as local
// servers speaking the real protocols: the LINE Messaging API, the Slack Web API, Ollama and the
// OpenAI Chat Completions API. Every binary exports its spans to an in-process OTLP/HTTP
// receiver and is stopped with SIGTERM, so it flushes them. Scenarios:
//
//   - LINE: a signed webhook with a CODE request, the approval request with postback buttons, a
//     signed postback pressing approve, the file in the workspace, the result reply.
//   - Slack: the same through a signed app_mention and a block_actions press.
//   - Terminal: Auto-Approve switched on over the approval REST API for docs/, a cli message to
//     chat-mio, the result in its reply.
//   - One trace per job (jobtrace_test.go): a typed /approve, a pressed button, /deliberate with a
//     typed /pick, a REST approval (the requester's chat is told once) and an expiry by the
//     sweeper (told once too), with every result pushed; on the exported spans, every span
//     naming a job is in the job's trace (where approval's RequestApproval ran) or in a trace
//     linked to it, and the job's trace holds the decision, the execution and the push.
//   - Crashes (crash_test.go): Auto-Approve switched off, approval killed with SIGKILL and Redis
//     handing back the grant as it was while on — still off after the restart; gateway-line and
//     chat-mio killed and every key of the deployment deleted (FLUSHALL), then deleted again
//     while they run — every job still gets a new id, above the audit log's ids of the day.
//
// Each checks the job's audit chain over the REST API and that the job is exactly one trace,
// across every service involved, with job_id on every span of it.
//
//	go test -count=1 ./e2e/
package e2e
