package secrets

// The corpus: error-message texts as agent-protocol providers return them
// (rate limits, validation, upstream failures), most without any secret,
// some with one embedded. Every credential below is made up. Those with a
// provider prefix are assembled from two string literals ("gh" + "p_…") so
// that this file itself holds nothing a secret scanner reports
// (TestSourceHasNoFinding checks it with gitleaks).

type text struct {
	name    string
	planted string // what the text holds that must not reach a record; "" for none
	s       string
}

var corpus = []text{
	// Without a secret.
	{"n01-ratelimit-tpm", "", "Rate limit reached for gpt-4o in organization org-Xq2vN8sLk1 on tokens per min (TPM): Limit 30000, Used 29876, Requested 512. Please try again in 1.024s. Visit https://platform.openai.com/account/rate-limits to learn more."},
	{"n02-too-many-requests", "", "Too Many Requests"},
	{"n03-ratelimit-org", "", "This request would exceed the rate limit for your organization (a1b2c3d4-e5f6-7890-abcd-ef1234567890) of 50,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits."},
	{"n04-overloaded", "", "Overloaded"},
	{"n05-server-error", "", "The server had an error while processing your request. Sorry about that!"},
	{"n06-timeout", "", "Request timed out after 600 seconds"},
	{"n07-temperature", "", "Invalid value for 'temperature': expected a number between 0 and 2, got 3.5."},
	{"n08-pydantic", "", "messages.0.content: Input should be a valid string"},
	{"n09-model-not-found", "", "The model `gpt-5-turbo-preview` does not exist or you do not have access to it."},
	{"n10-context-length", "", "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens (130560 in the messages, 512 in the functions). Please reduce the length of the messages or functions."},
	{"n11-max-tokens", "", "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for claude-3-haiku-20240307"},
	{"n12-tool-result", "", "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A09q90qw90lq917835lq9. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
	{"n13-upstream-reset", "", "upstream connect error or disconnect/reset before headers. reset reason: connection termination"},
	{"n14-quota-gemini", "", "Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer 'project_number:123456789012'."},
	{"n15-credit-balance", "", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},
	{"n16-string-too-long", "", "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 64 instead."},
	{"n17-content-filter", "", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry."},
	{"n18-uuid-not-found", "", "Conversation 3f2b8c1e-9a4d-4e7b-b1c2-8d9e0f1a2b3c not found"},
	{"n19-masked-key", "", "Incorrect API key provided: sk-proj-********************************************Xb4Q. You can find your API key at https://platform.openai.com/account/api-keys."},
	{"n20-permission", "", "Permission denied: the caller does not have permission to access resource projects/acme-prod/locations/us-central1/publishers/google/models/gemini-1.5-pro"},
	{"n21-json-parse", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)"},
	{"n22-auth-missing", "", "Missing Authentication header; expected 'x-api-key' or 'Authorization'."},
	{"n23-digests", "", "signature mismatch: expected 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b, got 2c26b46b68ffc68ff99b453c1d30413413422d70"},

	// With a secret or a customer value.
	{"s01-jwt", "JWT", "invalid token: " + "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c has expired"},
	{"s02-github-pat", "ghp_ token", "fetching repository failed: bad credentials for " + "gh" + "p_j59pjomke57foiu94c0D1lNQgtYk3IMJ9PvM (401)"},
	{"s03-stripe-live", "sk_live_ key", "Invalid API Key provided: " + "sk_" + "live_J11Uqz6DNLLgGxJCbUUrt93l"},
	{"s04-aws-akid", "AKIA key id", "The security token included in the request is invalid. (Service: BedrockRuntime, Status Code: 403, Request ID: 7c1a0e5e-3b8f-4f0a-9d1e-2a6b3c4d5e6f) access key " + "AK" + "IA3CZVLT7HJYUZLNLR"},
	{"s05-email", "e-mail", "User jane.doe@acme-corp.io has exceeded the per-user quota of 100 requests per day"},
	{"s06-phone", "phone", "Failed to deliver SMS to +1 415 555 0132: number is not reachable"},
	{"s07-bearer", "bearer token", "upstream returned 401 Unauthorized for Authorization: Bearer " + "cd749e17a32a6a3a" + "f3e78e6e783563f0"},
	{"s08-basic", "basic credentials", "proxy authentication failed for Basic YWxhZGRpbjpvcGVuc2VzYW1l"},
	{"s09-slack-bot", "xoxb- token", "chat.postMessage failed: invalid_auth (token " + "xo" + "xb-3619155797-5292311418740-CXS8I7ICIHEcBmBppXzRx1p5)"},
	{"s10-gitlab-pat", "glpat- token", "pipeline trigger rejected: token " + "gl" + "pat-PqTLkCVeHcKMTXsHH-hk has been revoked"},
	{"s11-gcp-key", "AIza key", "API key not valid. Please pass a valid API key. (key=" + "AI" + "zaz0nQQG9WJ05X72qibobT_Jox17RWEVxropm)"},
	{"s12-anthropic-key", "sk-ant- key", "invalid x-api-key: " + "sk-ant-" + "api03-O6W9-yNsOSUTbfUwzov1sjBNMFZlvLu5MhikfhyPsrTEIXdHJwqRIsBIrlyDrWNHa9ZPJ055h3ZY7Isg-qOwVxQ3pZ9wpAA"},
	{"s13-openai-key", "sk-proj- key", "Incorrect API key provided: " + "sk-" + "proj-zcVRMk245Brxqq_KyzsOnFg4xarI6F3H-r_up8cUb1ErTHEZnVwX5lfiA5" + "T3Blb" + "kFJnYQnLqFWfDNJGhjaIFw40YUcYqvc4eDqFj1ZKnb8EXW-_srXpBKG7m85VK."},
	{"s14-dsn-password", "password in URL", "could not connect to postgres://app:" + "LFb4EM0duIBL1LgZ" + "@db.internal:5432/errtrail: password authentication failed for user \"app\""},
	{"s15-api-key-param", "api_key value", "request rejected: api_key=" + "47e0fa5f9b3e236a3305ae95cdff4fbc is disabled"},
	{"s16-aws-secret", "AWS secret key", "credential error: aws_secret_access_key=" + "X84FI0Ta01Mjk4JyoQdEjS8ZZAZ4F8VV2xjCnzvz does not match the access key id"},
}
