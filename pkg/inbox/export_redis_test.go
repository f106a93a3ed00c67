//go:build !sqliteonly

package inbox

// ScriptName names the inbox's Redis script with the SHA1 sha (sha itself when none has it).
func ScriptName(sha string) string {
	for name, s := range map[string]interface{ Hash() string }{
		"append": appendScript, "turn": turnScript, "ack": ackScript, "touch": touchScript, "replay": replayScript,
	} {
		if s.Hash() == sha {
			return "script_" + name
		}
	}
	return sha
}
