-- wrk script: POST one small chat completion per request (bench/mockapi_wrk.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":20}'
