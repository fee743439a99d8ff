/// Waits for the first element of `stream` matching `predicate`, or `nil` after `timeout`.
func firstEvent<T: Sendable>(_ stream: AsyncStream<T>, timeout: Duration, where predicate: @escaping @Sendable (T) -> Bool) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let result = await group.next() ?? nil
        group.cancelAll()
        return result
    }
}
