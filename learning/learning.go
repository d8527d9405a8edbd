// Package learning ranks, packs and learns: the token counter shared by
// every write, and (as the recall and feedback layers grow) the scorer,
// the Ebbinghaus decay, the token-budget packer, feedback credit and the
// preference-pair exporters.
package learning
