// Writes querybuilder/testdata/schema_fields.json: the fields PostHog's
// published query schema defines for each node insightd serves, with
// their defaults, as the pinned @posthog/cli ships that schema (the zod
// input schemas of its query tools, generated from PostHog's
// schema.json). querybuilder/schema_fields_test.go reads it.
//   node scripts/sdk/node/schema-fields.mjs > querybuilder/testdata/schema_fields.json
import fs from 'fs'
import { createRequire } from 'module'

const require = createRequire(import.meta.url)
const cli = require.resolve('@posthog/cli/package.json').replace(/package\.json$/, 'lib/posthog-api-cli.mjs')
const version = JSON.parse(fs.readFileSync(require.resolve('@posthog/cli/package.json'))).version
const lines = fs.readFileSync(cli, 'utf8').split('\n')

// Where each schema object sits in a node insightd serves: its kind and
// the JSON path of the object inside it ("" the node itself).
const at = [
  ['AssistantTrendsQuery', 'TrendsQuery', ''],
  ['AssistantTrendsFilter', 'TrendsQuery', 'trendsFilter'],
  ['AssistantTrendsBreakdownFilter', 'TrendsQuery', 'breakdownFilter'],
  ['CompareFilter', 'TrendsQuery', 'compareFilter'],
  ['AssistantDateRange2', 'TrendsQuery', 'dateRange'],
  ['AssistantTrendsEventsNode', 'TrendsQuery', 'series.0'],
  ['AssistantFunnelsQuery', 'FunnelsQuery', ''],
  ['AssistantFunnelsFilter', 'FunnelsQuery', 'funnelsFilter'],
  ['AssistantFunnelsBreakdownFilter', 'FunnelsQuery', 'breakdownFilter'],
  ['AssistantFunnelsEventsNode', 'FunnelsQuery', 'series.0'],
  ['AssistantFunnelsExclusionEventsNode', 'FunnelsQuery', 'funnelsFilter.exclusions.0'],
  ['AssistantRetentionQuery', 'RetentionQuery', ''],
  ['AssistantRetentionFilter', 'RetentionQuery', 'retentionFilter'],
  ['AssistantRetentionEventsNode', 'RetentionQuery', 'retentionFilter.targetEntity'],
  ['AssistantRetentionActionsNode', 'RetentionQuery', 'retentionFilter.returningEntity'],
  ['AssistantStickinessQuery', 'StickinessQuery', ''],
  ['AssistantStickinessFilter', 'StickinessQuery', 'stickinessFilter'],
  ['AssistantStickinessEventsNode', 'StickinessQuery', 'series.0'],
  ['AssistantPathsQuery', 'PathsQuery', ''],
  ['AssistantPathsFilter', 'PathsQuery', 'pathsFilter'],
  ['AssistantLifecycleQuery', 'LifecycleQuery', ''],
  ['AssistantLifecycleFilter', 'LifecycleQuery', 'lifecycleFilter'],
  ['AssistantLifecycleEventsNode', 'LifecycleQuery', 'series.0'],
  ['AssistantInsightVizNode', 'InsightVizNode', ''],
  ['AssistantDataVisualizationNode', 'DataVisualizationNode', ''],
  ['AssistantTrendsActorsQuery', 'ActorsQuery/TrendsQuery', 'source'],
  ['AssistantStickinessActorsQuery', 'ActorsQuery/StickinessQuery', 'source'],
  ['AssistantLifecycleActorsQuery', 'ActorsQuery/LifecycleQuery', 'source'],
  ['AssistantRetentionActorsQuery', 'ActorsQuery/RetentionQuery', 'source'],
  ['AssistantPathsActorsQuery', 'ActorsQuery/PathsQuery', 'source'],
  ['AssistantFunnelsActorsQuery', 'ActorsQuery/FunnelsQuery', 'source'],
]

// objects reads each `var Name = external_exports.object({ ... })` of
// the bundle: its fields and the value of their .default(), null when
// none.
function objects() {
  const out = {}
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/^var (\w+) = external_exports\.object\(\{$/)
    if (!m) continue
    const fields = {}
    let cur = null
    let text = ''
    const flush = () => {
      if (!cur) return
      const d = text.match(/\.default\(([^()]*|\[\]|\{\})\)/)
      let v = null
      try {
        v = d ? JSON.parse(d[1]) : null
      } catch {
        v = { unparsed: d[1] } // a constant of the bundle, not a literal
      }
      fields[cur] = v
    }
    for (let j = i + 1; j < lines.length && !lines[j].startsWith('})'); j++) {
      const f = lines[j].match(/^ {2}"?(\w+)"?: (.*)$/)
      if (f) {
        flush()
        cur = f[1]
        text = f[2]
      } else text += lines[j]
    }
    flush()
    out[m[1]] = fields
  }
  return out
}

const all = objects()
const nodes = at.map(([schema, kind, path]) => {
  if (!all[schema]) throw new Error(`${schema} is not in @posthog/cli ${version}`)
  const fields = { ...all[schema] }
  delete fields.kind
  return { schema, kind, at: path, fields }
})
process.stdout.write(JSON.stringify({ source: `@posthog/cli ${version} lib/posthog-api-cli.mjs (PostHog's query schema as its tools validate input)`, nodes }, null, 1) + '\n')
