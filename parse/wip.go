package parse

// scratch is the Decoder's reusable memory.
type scratch struct {
	raw []byte
}

func (d *Decoder) decodeMessage(value []byte, headers []MsgHeader, kafkaTimeMS int64, out *Record) error {
	out.reset()
	return errAt(ErrBadEvent, "event", -1, "decoder under construction")
}

func (d *Decoder) decodeReply(rep *Reply, out *Record) error {
	out.reset()
	return errAt(ErrBadEvent, "reply", -1, "decoder under construction")
}
