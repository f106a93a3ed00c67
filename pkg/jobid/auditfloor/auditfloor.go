// Package auditfloor is the JobID floor from approval's audit store: the highest number of a
// day's ids there (ApprovalService.HighestJobNumber), so a counter that lost its state starts
// above every id that reached a job.
package auditfloor

import (
	"context"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// New asks approval through client.
func New(client approvalv1connect.ApprovalServiceClient) jobid.Floor {
	return func(ctx context.Context, day string) (int64, error) {
		res, err := client.HighestJobNumber(ctx, &approvalv1.HighestJobNumberRequest{Day: day})
		if err != nil {
			return 0, err
		}
		return res.GetNumber(), nil
	}
}
