// Drives a running insightd with the official PostHog Node SDK, as a Node
// server would use it: anonymous pageviews, an identify, an alias that
// merges the anonymous id into the user, a group identify and purchases
// with a group. INSIGHTD_HOST and INSIGHTD_TOKEN say where; it prints
// {"sent": {event: count}, "errors": [...]} and fails when the SDK
// reported an error. api/sdk_test.go runs it and checks the counts.
import { PostHog } from 'posthog-node'

const host = process.env.INSIGHTD_HOST
const token = process.env.INSIGHTD_TOKEN
if (!host || !token) {
  console.error('INSIGHTD_HOST and INSIGHTD_TOKEN are required')
  process.exit(2)
}

// Small batches, so the flow takes several requests; no retries, so a
// refused batch shows as an error instead of a late success.
const client = new PostHog(token, { host, flushAt: 4, flushInterval: 50, fetchRetryCount: 0 })
const errors = []
client.on('error', (err) => errors.push(String(err?.message ?? err)))

const sent = {}
const count = (event) => { sent[event] = (sent[event] ?? 0) + 1 }

for (let i = 0; i < 12; i++) {
  client.capture({ distinctId: 'anon-node', event: '$pageview', properties: { $current_url: `https://shop.example/p/${i}`, i } })
  count('$pageview')
}
client.identify({ distinctId: 'node-user', properties: { email: 'node@example.com', plan: 'pro' } })
count('$identify')
client.alias({ distinctId: 'node-user', alias: 'anon-node' })
count('$create_alias')
client.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { name: 'Acme' } })
count('$groupidentify')
for (let i = 0; i < 5; i++) {
  client.capture({ distinctId: 'node-user', event: 'purchase', properties: { amount: 10 * (i + 1) }, groups: { company: 'acme' } })
  count('purchase')
}

await client.shutdown(20000)
console.log(JSON.stringify({ sent, errors }))
process.exit(errors.length > 0 ? 1 : 0)
