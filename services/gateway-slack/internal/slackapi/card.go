package slackapi

import (
	"github.com/slack-go/slack"

	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

var riskEmoji = map[string]string{"high": ":red_circle: ", "medium": ":large_orange_circle: ", "low": ":large_green_circle: "}

// CardBlocks is an approval card as Block Kit: a header, the risk and summary, one section per
// changed file with its lines in a code block, the facts, the console link, the approve / deny
// buttons (the same action ids and values as any decision buttons) and the typed commands.
func CardBlocks(msg domain.OutMessage, texts domain.Texts) []slack.Block {
	c := msg.Card
	md := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, s, false, true)
	}
	blocks := []slack.Block{slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, c.Header, true, false))}
	if c.Intro != "" {
		blocks = append(blocks, slack.NewSectionBlock(md(riskEmoji[c.Risk]+c.Intro), nil, nil))
	}
	if len(c.Files) > 0 {
		blocks = append(blocks, slack.NewDividerBlock())
	}
	for _, f := range c.Files {
		blocks = append(blocks, slack.NewSectionBlock(md(f), nil, nil))
	}
	if c.Facts != "" {
		blocks = append(blocks, slack.NewContextBlock("", md(c.Facts)))
	}
	if c.Console != "" {
		blocks = append(blocks, slack.NewSectionBlock(md(c.Console), nil, nil))
	}
	tail := []slack.Block{decisionBlock(msg.Buttons, texts)}
	if c.Commands != "" {
		tail = append(tail, slack.NewContextBlock("commands", md(c.Commands)))
	}
	if len(blocks)+len(tail) > domain.MaxBlocks {
		blocks = blocks[:domain.MaxBlocks-len(tail)]
	}
	return append(blocks, tail...)
}
