/// What other threads hand a loop: a handler's answer, or a connection the accepting loop gave it.
enum LoopMessage: Sendable {
    /// The answer to the request `exchange` of the connection in `slot` (of `generation`).
    case answer(slot: Int32, generation: UInt32, exchange: UInt32, HTTPResponse)
    /// A connection accepted by another loop, now this one's.
    case connection(Int32)
}
