// Package reflections will hold engram's L3 layer (DESIGN §5): the
// reflector that groups L2 memories by category, subcategory and tag and
// writes one Markdown reflection per group citing the L2 ids it rests on
// (extractive by default, abstractive through an OpenAI-compatible chat
// endpoint when configured), the L1 → L2 distillation at the end of a
// session, and the sleep cycle that merges duplicates, applies decay,
// archives what fell below its floor and re-reflects changed groups.
//
// Nothing is implemented yet; recall routes "reflect" queries to the L3
// layer once it exists.
package reflections
