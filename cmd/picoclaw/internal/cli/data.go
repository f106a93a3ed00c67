package cli

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// dataFiles are the databases of an embedded data directory.
var dataFiles = []string{"audit.db", "state.db"}

// dataFlagUsage describes --data of the commands that read the embedded suite's directory.
const dataFlagUsage = "the embedded suite's data directory (default: ./data when it holds a suite, else $XDG_DATA_HOME/picoclaw)"

// dataDirOr is dir, or the default data directory when dir is empty.
func (g *globals) dataDirOr(dir string) string {
	if dir != "" {
		return dir
	}
	return defaultDataDir(g.io.Getenv)
}

// newDataCmd is `picoclaw data compact|export`: the operator's tools for the embedded suite's
// data directory.
func newDataCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "data", Short: "compact or export the embedded suite's data directory",
		Args: groupArgs, RunE: groupRun, Annotations: map[string]string{annotNoConfig: "yes"},
	}
	var dir, out string
	compact := &cobra.Command{
		Use: "compact [--data DIR]", Short: "fold the write-ahead logs back and rebuild the databases without free pages (suite stopped)",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return compactData(cmd.Context(), g, g.dataDirOr(dir)) },
	}
	compact.Flags().StringVar(&dir, "data", "", dataFlagUsage)
	export := &cobra.Command{
		Use: "export [--data DIR] [--out FILE]", Short: "write every row of the databases as JSON lines, secrets masked",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return exportData(cmd.Context(), g, g.dataDirOr(dir), out) },
	}
	export.Flags().StringVar(&dir, "data", "", dataFlagUsage)
	export.Flags().StringVar(&out, "out", "-", "file to write (- = standard output)")
	for _, c := range []*cobra.Command{compact, export} {
		_ = c.MarkFlagDirname("data")
	}
	cmd.AddCommand(compact, export)
	return cmd
}

// openData opens one database of the data directory (nil when the file does not exist).
func openData(dir, name string) (*sql.DB, error) {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, nil
	}
	db, err := sql.Open("sqlite", sqlstate.DSN(path, sqlstate.SyncFull, 10*time.Second))
	if err != nil {
		return nil, texts.Wrap(nil, err, txtDatabase, path, err.Error())
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// compactData folds the write-ahead logs back and rebuilds each database without its free
// pages. It needs the suite stopped (it takes the data directory's lock).
func compactData(ctx context.Context, g *globals, dir string) error {
	lock, err := lockDataDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	bar := newProgress(g.io.Err, "compact", int64(len(dataFiles)), "databases")
	defer bar.Done()
	for _, name := range dataFiles {
		bar.Label("compact " + name)
		db, err := openData(dir, name)
		if err != nil || db == nil {
			if err != nil {
				return err
			}
			continue
		}
		before := diskSize(filepath.Join(dir, name))
		_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		if err == nil {
			_, err = db.ExecContext(ctx, `VACUUM`)
		}
		if err == nil {
			_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		_ = db.Close()
		bar.Add(1)
		if err != nil {
			return texts.Wrap(nil, err, txtCompactFailed, name, err.Error())
		}
		bar.Done()
		fmt.Fprintf(g.io.Out, "%s: %s → %s\n", name, human(before), human(diskSize(filepath.Join(dir, name))))
	}
	return nil
}

// diskSize is a database's size with its write-ahead log.
func diskSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// exportRow is one line of an export: a row of a table of a database, secrets masked.
type exportRow struct {
	DB    string         `json:"db"`
	Table string         `json:"table"`
	Row   map[string]any `json:"row"`
}

// exportData writes every row of every table of the data directory's databases as JSON
// lines. It reads a consistent snapshot of each database and may run while the suite does.
func exportData(ctx context.Context, g *globals, dir, out string) error {
	var w io.Writer = g.io.Out
	if out != "-" {
		// A new file, owner-only: an existing file (or a link planted there) is never written.
		f, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return texts.Wrap(nil, err, txtExportOpen, out, trouble(err))
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	rows := 0
	for _, name := range dataFiles {
		db, err := openData(dir, name)
		if err != nil {
			return err
		}
		if db == nil {
			continue
		}
		n, err := exportDB(ctx, db, name, enc, g.io.Err)
		_ = db.Close()
		if err != nil {
			return texts.Wrap(nil, err, txtExportFailed, name, err.Error())
		}
		rows += n
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(g.io.Err, say(g.locale, txtExported, strconv.Itoa(rows)))
	return nil
}

func exportDB(ctx context.Context, db *sql.DB, name string, enc *json.Encoder, progressTo io.Writer) (int, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	var tables []string
	trows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return 0, err
	}
	for trows.Next() {
		var t string
		if err := trows.Scan(&t); err != nil {
			trows.Close()
			return 0, err
		}
		tables = append(tables, t)
	}
	trows.Close()
	// On a terminal, a bar counts the rows (counted first, in the same snapshot).
	var bar *progress
	if isTerminal(progressTo) {
		var total int64
		for _, t := range tables {
			var c int64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM "`+t+`"`).Scan(&c); err != nil {
				return 0, err
			}
			total += c
		}
		bar = newProgress(progressTo, "export "+name, total, "rows")
		defer bar.Done()
	}
	n := 0
	for _, t := range tables {
		rows, err := tx.QueryContext(ctx, `SELECT * FROM "`+t+`"`)
		if err != nil {
			return n, err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return n, err
			}
			row := make(map[string]any, len(cols))
			for i, c := range cols {
				switch v := vals[i].(type) {
				case []byte:
					row[c] = redact.Secrets(string(v))
				case string:
					row[c] = redact.Secrets(v)
				default:
					row[c] = v
				}
			}
			if err := enc.Encode(exportRow{DB: name, Table: t, Row: row}); err != nil {
				rows.Close()
				return n, err
			}
			n++
			bar.Add(1)
		}
		if err := rows.Close(); err != nil {
			return n, err
		}
	}
	return n, nil
}
