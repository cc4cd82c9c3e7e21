"""_util"""
