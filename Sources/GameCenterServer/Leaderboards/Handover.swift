/// A value made by one task and handed to another, which from then on is its only user: an index built by a child
/// task while a board is built, then installed under the board's lock.
/// `@unchecked Sendable`: ownership moves: the maker never touches the value after handing it over.
struct Handover<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
