package ingest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/insightd/insightd/api/httpx"
)

// PostHog's JS SDK sends an autocapture event's elements as $elements, a
// list from the clicked element up to the document's root (newer versions
// send $elements_chain, the same as text). Actions match element rules
// against the text form, so capture stores $elements_chain beside
// $elements when only the list was sent, written as PostHog writes it:
// per element tag.class1.class2 (classes sorted) then ':' and its
// attributes key="value" sorted by key (text, href, attr_id, nth-child,
// nth-of-type and every attr__ attribute), quotes escaped; elements
// joined by ';'.

// withElementsChain adds $elements_chain to properties holding $elements.
func withElementsChain(props string) (string, error) {
	if !strings.Contains(props, `"$elements"`) {
		return props, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(props), &m); err != nil {
		return props, err
	}
	raw, ok := m["$elements"]
	if !ok || httpx.IsJSONNull(raw) {
		return props, nil
	}
	if _, has := m["$elements_chain"]; has {
		return props, nil
	}
	var elements []map[string]any
	if json.Unmarshal(raw, &elements) != nil {
		return props, fmt.Errorf("$elements must be a list of elements")
	}
	chain, err := json.Marshal(elementsChain(elements))
	if err != nil {
		return props, err
	}
	m["$elements_chain"] = chain
	b, err := json.Marshal(m)
	return string(b), err
}

// elementsChain writes elements as PostHog's elements_chain.
func elementsChain(elements []map[string]any) string {
	parts := make([]string, 0, len(elements))
	for _, el := range elements {
		var b strings.Builder
		b.WriteString(text(el["tag_name"]))
		var classes []string
		switch c := el["attr__class"].(type) {
		case string:
			classes = strings.Fields(c)
		case []any:
			for _, x := range c {
				classes = append(classes, text(x))
			}
		}
		if len(classes) == 0 {
			if c, ok := el["classes"].([]any); ok {
				for _, x := range c {
					classes = append(classes, text(x))
				}
			}
		}
		sort.Strings(classes)
		for _, c := range classes {
			if c = strings.ReplaceAll(c, `"`, ""); c != "" {
				b.WriteString("." + c)
			}
		}
		attrs := map[string]string{"nth-child": numberText(el["nth_child"]), "nth-of-type": numberText(el["nth_of_type"])}
		if t := text(el["$el_text"]); t != "" {
			attrs["text"] = t
		}
		if h := firstText(el["attr__href"], el["href"]); h != "" {
			attrs["href"] = h
		}
		if id := firstText(el["attr__id"], el["attr_id"]); id != "" {
			attrs["attr_id"] = id
		}
		for k, v := range el {
			if strings.HasPrefix(k, "attr__") {
				attrs[k] = text(v)
			}
		}
		keys := make([]string, 0, len(attrs))
		for k := range attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(":")
		for _, k := range keys {
			fmt.Fprintf(&b, `%s="%s"`, strings.ReplaceAll(k, `"`, `\"`), strings.ReplaceAll(attrs[k], `"`, `\"`))
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, ";")
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = text(e)
		}
		return strings.Join(parts, " ")
	}
	return fmt.Sprint(v)
}

func firstText(vs ...any) string {
	for _, v := range vs {
		if s := text(v); s != "" {
			return s
		}
	}
	return ""
}

func numberText(v any) string {
	if f, ok := v.(float64); ok {
		return fmt.Sprintf("%d", int64(f))
	}
	if s := text(v); s != "" {
		return s
	}
	return "0"
}
