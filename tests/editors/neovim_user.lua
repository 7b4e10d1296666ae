-- Drives headless Neovim as a user would, after the user's init.lua (a block of
-- docs/editors.md) attached `lintloader server` to the opened fetching.py: read the
-- diagnostics, make an unsaved edit in supporters.py that removes the reset (the finding
-- clears), undo it (the finding returns), apply the preferred quick fix and write the file
-- (the finding clears). Results: $LL_OUT (JSON). Written for Neovim 0.7's API.
local out_path = os.getenv("LL_OUT")
local supporters = os.getenv("LL_SUPPORTERS")
local results = { diagnostics = {}, titles = {} }
local fetching = vim.api.nvim_get_current_buf()
local WAIT = 120000

local function finish()
  local handle = io.open(out_path, "w")
  handle:write(vim.fn.json_encode(results))
  handle:close()
  vim.cmd("qall!")
end

local function count(buffer)
  return #vim.diagnostic.get(buffer)
end

results.attached = vim.wait(WAIT, function()
  return #vim.tbl_keys(vim.lsp.buf_get_clients(fetching)) > 0
end, 50)
results.published = vim.wait(WAIT, function() return count(fetching) > 0 end, 50)
for _, diagnostic in ipairs(vim.diagnostic.get(fetching)) do
  local lsp = diagnostic.user_data and diagnostic.user_data.lsp or {}
  local related = {}
  for _, info in ipairs(lsp.relatedInformation or {}) do
    table.insert(related, {
      path = vim.uri_to_fname(info.location.uri),
      line = info.location.range.start.line,
      message = info.message,
    })
  end
  table.insert(results.diagnostics, {
    code = lsp.code, lnum = diagnostic.lnum, col = diagnostic.col, related = related,
  })
end

-- another file, edited and not saved: the reset's helper no longer resets
vim.cmd("edit " .. supporters)
local other = vim.api.nvim_get_current_buf()
results.same_client = vim.tbl_keys(vim.lsp.buf_get_clients(other))[1]
  == vim.tbl_keys(vim.lsp.buf_get_clients(fetching))[1]
local found = vim.fn.search("def _shutdown_workers_and_reset_iterator")
vim.api.nvim_buf_set_lines(other, found, found + 3, false, { "        return dataloader" })
results.cleared_by_other = vim.wait(WAIT, function() return count(fetching) == 0 end, 50)
vim.cmd("silent undo")
results.restored = vim.wait(WAIT, function() return count(fetching) > 0 end, 50)
vim.cmd("buffer " .. fetching)

local first = vim.diagnostic.get(fetching)[1]
vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })
local params = vim.lsp.util.make_range_params()
params.context = { diagnostics = {}, only = { "quickfix" } }
local answers = vim.lsp.buf_request_sync(fetching, "textDocument/codeAction", params, WAIT) or {}
local chosen = nil
for _, answer in pairs(answers) do
  for _, action in ipairs(answer.result or {}) do
    table.insert(results.titles, action.title)
    if chosen == nil and action.isPreferred then
      chosen = action
    end
  end
end
if chosen ~= nil then
  vim.lsp.util.apply_workspace_edit(chosen.edit, "utf-16")
  vim.cmd("wall")
  results.cleared = vim.wait(WAIT, function() return count(fetching) == 0 end, 50)
end
for _, client in pairs(vim.lsp.get_active_clients()) do
  client.stop()
end
vim.wait(10000, function() return #vim.lsp.get_active_clients() == 0 end, 50)
finish()
