-- wrk script: POST one streamed chat completion per request, with usage
-- (24 server-sent events at 20 completion tokens; bench/mockapi_wrk.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":20,"stream":true,"stream_options":{"include_usage":true}}'
