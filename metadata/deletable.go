package metadata

// Deletable is a resource kept after it is deleted (soft delete): the API
// answers 404 for it as for one that never existed, and it can be
// restored.
type Deletable interface{ IsDeleted() bool }

// IsDeleted implements Deletable.
func (a *Action) IsDeleted() bool { return a.Deleted }

// IsDeleted implements Deletable.
func (a *Annotation) IsDeleted() bool { return a.Deleted }

// IsDeleted implements Deletable.
func (c *Cohort) IsDeleted() bool { return c.Deleted }

// IsDeleted implements Deletable.
func (d *Dashboard) IsDeleted() bool { return d.Deleted }

// IsDeleted implements Deletable.
func (i *Insight) IsDeleted() bool { return i.Deleted }
