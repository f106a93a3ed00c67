package patch

// Metadata keys the parser produces and the executor reads.
const (
	// MetaTo is the new path of a file_edit rename.
	MetaTo = "to"
	// MetaBranch is the branch of a git push (pushed to the same name) or checkout.
	MetaBranch = "branch"
	// MetaForce is "true" for git push --force / checkout --force, "lease" for
	// git push --force-with-lease.
	MetaForce = "force"
	// MetaSetUpstream is "true" for git push -u.
	MetaSetUpstream = "set_upstream"
	// MetaMode is hard, soft or mixed for git reset.
	MetaMode = "mode"
	// MetaNewBranch is "true" for git checkout -b.
	MetaNewBranch = "new_branch"

	// MetaX and MetaY are viewport coordinates for chrome_click_element without a selector.
	MetaX = "x"
	MetaY = "y"
	// MetaValue (chrome_fill_or_select) and MetaKeys (chrome_keyboard) are moved into the
	// content when an author puts them in metadata.
	MetaValue = "value"
	MetaKeys  = "keys"
)
